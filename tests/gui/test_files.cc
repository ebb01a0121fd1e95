#include "test_files.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace hvdview::testing {

std::string TempPath(const std::string& name) {
  static const std::filesystem::path folder = [] {
    auto path =
        std::filesystem::temp_directory_path() / ("hvdview_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
    return path;
  }();
  return (folder / name).string();
}

std::string WriteTempFile(const std::string& name, const std::string& content) {
  const std::string path = TempPath(name);
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

std::string DataFile(const std::string& name) {
  return std::string(HVDVIEW_TEST_DATA) + "/" + name;
}

}  // namespace hvdview::testing
