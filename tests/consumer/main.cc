// Links against an installed shale and does one write and read.
#include <cstdio>
#include <string>

#include "shale/db.h"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  shale::Options options;
  options.create_if_missing = true;
  shale::DB* db = nullptr;
  shale::Status s = shale::DB::Open(options, argv[1], &db);
  if (!s.ok()) {
    fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  std::string v;
  s = db->Put(shale::WriteOptions(), "k", "v");
  if (s.ok()) s = db->Get(shale::ReadOptions(), "k", &v);
  delete db;
  if (!s.ok() || v != "v") return 1;
  printf("consumer ok\n");
  return 0;
}
