// hvd_json_check FILE...: exits 0 when every file is a JSON array of trace events.
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

int main(int argc, char** argv) {
  int bad = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream f(argv[i]);
    try {
      auto j = nlohmann::json::parse(f);
      if (!j.is_array()) throw std::runtime_error("not an array");
      std::cout << argv[i] << ": " << j.size() << " events\n";
    } catch (const std::exception& e) {
      std::cerr << argv[i] << ": " << e.what() << '\n';
      ++bad;
    }
  }
  return bad ? 1 : 0;
}
