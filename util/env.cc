// The Env helpers that work over any Env.
#include "shale/env.h"

#include <memory>

namespace shale {

Status ReadFileToString(Env* env, const std::string& fname, std::string* data) {
  data->clear();
  std::unique_ptr<SequentialFile> file;
  Status s = env->NewSequentialFile(fname, &file, EnvOptions());
  if (!s.ok()) return s;
  constexpr size_t kBufferSize = 64 * 1024;
  std::unique_ptr<char[]> space(new char[kBufferSize]);
  while (true) {
    Slice fragment;
    s = file->Read(kBufferSize, &fragment, space.get());
    if (!s.ok()) break;
    data->append(fragment.data(), fragment.size());
    if (fragment.empty()) break;
  }
  return s;
}

Status WriteStringToFile(Env* env, const Slice& data, const std::string& fname, bool should_sync) {
  std::unique_ptr<WritableFile> file;
  Status s = env->NewWritableFile(fname, &file, EnvOptions());
  if (!s.ok()) return s;
  s = file->Append(data);
  if (s.ok() && should_sync) s = file->Sync();
  if (s.ok()) {
    s = file->Close();
  } else {
    file->Close().PermitUncheckedError();
  }
  file.reset();
  // A half-written file must not be mistaken for a complete one.
  if (!s.ok()) env->DeleteFile(fname).PermitUncheckedError();
  return s;
}

}  // namespace shale
