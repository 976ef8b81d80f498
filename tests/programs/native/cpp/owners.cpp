// Maps of unique_ptr: lldb 22 crashes on these with its own libstdc++ formatter (llvm-project #202087).
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

struct Widget {
    int id;
    std::string label;
};

int main() {
    std::unordered_map<std::string, std::unique_ptr<Widget>> widgets;
    widgets["one"] = std::make_unique<Widget>(Widget{1, "first"});
    std::map<int, std::unique_ptr<Widget>> by_id;
    by_id[7] = std::make_unique<Widget>(Widget{7, "seventh"});
    std::unique_ptr<Widget> empty;
    std::printf("%zu %zu %d\n", widgets.size(), by_id.size(), empty ? 1 : 0);  // after owners
    return 0;
}
