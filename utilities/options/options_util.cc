// LoadLatestOptions / LoadOptionsFromFile: an OPTIONS file parsed by the options layer,
// with merge operators resolved among the built-in ones (which live in this layer).
#include "shale/utilities/options_util.h"

#include "options/options_file.h"
#include "shale/utilities/merge_operators.h"

namespace shale {
namespace {

// The value of `key` in RocksDB's "{id=X;key=value;}" spelling of a configured object.
std::string ObjectField(const std::string& value, const std::string& key) {
  const std::string needle = key + "=";
  size_t p = value.find(needle);
  while (p != std::string::npos && p > 0 && value[p - 1] != '{' && value[p - 1] != ';') {
    p = value.find(needle, p + 1);
  }
  if (p == std::string::npos) return "";
  p += needle.size();
  const size_t end = value.find(';', p);
  return value.substr(p, end == std::string::npos ? std::string::npos : end - p);
}

// A built-in merge operator from its OPTIONS-file value; nullptr if unknown.
std::shared_ptr<MergeOperator> MergeOperatorFromValue(const std::string& value) {
  if (value.empty() || value.front() != '{') return MergeOperators::CreateFromStringId(value);
  const std::string id = ObjectField(value, "id");
  const std::string delimiter = ObjectField(value, "delimiter");
  if (!delimiter.empty() && (id == "StringAppendOperator" || id == "stringappend")) {
    return MergeOperators::CreateStringAppendOperator(delimiter);
  }
  return MergeOperators::CreateFromStringId(id);
}

}  // namespace

Status GetLatestOptionsFileName(const std::string& dbpath, Env* env,
                                std::string* options_file_name) {
  std::vector<std::string> children;
  Status s = env->GetChildren(dbpath, &children);
  if (!s.ok()) return s;
  uint64_t newest = 0;
  bool found = false;
  for (const std::string& name : children) {
    uint64_t number;
    if (ParseOptionsFileName(name, &number) && (!found || number > newest)) {
      newest = number;
      found = true;
      *options_file_name = name;
    }
  }
  if (!found) return Status::NotFound("no OPTIONS file in", dbpath);
  return Status::OK();
}

Status LoadOptionsFromFile(const ConfigOptions& config_options,
                           const std::string& options_file_name, DBOptions* db_options,
                           std::vector<ColumnFamilyDescriptor>* cf_descs,
                           std::shared_ptr<Cache>* cache) {
  Env* env = config_options.env != nullptr ? config_options.env : Env::Default();
  std::string text;
  Status s = ReadFileToString(env, options_file_name, &text);
  if (!s.ok()) return s;
  ParseOptionsConfig config;
  config.ignore_unknown_options = config_options.ignore_unknown_options;
  if (cache != nullptr) config.cache = *cache;
  ParsedOptions parsed;
  s = ParseOptions(text, options_file_name, config, &parsed);
  if (!s.ok()) return s;
  std::vector<ColumnFamilyDescriptor> descs;
  for (size_t i = 0; i < parsed.cf_names.size(); ++i) {
    ColumnFamilyOptions& cf = parsed.cf_options[i];
    const std::string& merge = parsed.merge_operator_names[i];
    if (!merge.empty()) {
      cf.merge_operator = MergeOperatorFromValue(merge);
      if (cf.merge_operator == nullptr) {
        return Status::InvalidArgument(options_file_name,
                                       "unknown merge_operator \"" + merge + "\"");
      }
    }
    descs.emplace_back(parsed.cf_names[i], cf);
  }
  parsed.db_options.env = env;
  *db_options = parsed.db_options;
  *cf_descs = std::move(descs);
  return Status::OK();
}

Status LoadLatestOptions(const ConfigOptions& config_options, const std::string& dbpath,
                         DBOptions* db_options, std::vector<ColumnFamilyDescriptor>* cf_descs,
                         std::shared_ptr<Cache>* cache) {
  Env* env = config_options.env != nullptr ? config_options.env : Env::Default();
  std::string name;
  Status s = GetLatestOptionsFileName(dbpath, env, &name);
  if (!s.ok()) return s;
  return LoadOptionsFromFile(config_options, dbpath + "/" + name, db_options, cf_descs, cache);
}

}  // namespace shale
