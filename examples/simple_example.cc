// The smallest useful shale program: open (creating) a DB, write, read, iterate, close.
// usage: simple_example [db_path]
#include <cstdio>
#include <memory>
#include <string>

#include "shale/db.h"

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "/tmp/shale_simple_example";
  shale::Options options;
  options.create_if_missing = true;
  std::unique_ptr<shale::DB> db;
  shale::Status s = shale::DB::Open(options, path, &db);
  if (!s.ok()) {
    fprintf(stderr, "open: %s\n", s.ToString().c_str());
    return 1;
  }
  s = db->Put(shale::WriteOptions(), "hello", "world");
  std::string value;
  if (s.ok()) s = db->Get(shale::ReadOptions(), "hello", &value);
  if (!s.ok()) {
    fprintf(stderr, "put/get: %s\n", s.ToString().c_str());
    return 1;
  }
  printf("hello -> %s\n", value.c_str());

  shale::WriteBatch batch;
  s = batch.Delete("hello");
  if (s.ok()) s = batch.Put("key1", "value1");
  if (s.ok()) s = db->Write(shale::WriteOptions(), &batch);
  std::unique_ptr<shale::Iterator> it(db->NewIterator(shale::ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    printf("%s = %s\n", it->key().ToString().c_str(), it->value().ToString().c_str());
  }
  if (!it->status().ok()) return 1;
  it.reset();
  s = db->Close();
  printf("close: %s\n", s.ToString().c_str());
  return s.ok() ? 0 : 1;
}
