// A C++ program for the gdb backend tests: STL containers read through libstdc++'s pretty printers,
// and (with the argument "throw") a C++ exception thrown and caught.
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

struct Item {
    int id;
    std::string label;
};

int total(const std::vector<int> &values) {
    int sum = 0;
    for (int v : values) sum += v;
    return sum; // marker: total return
}

void check(int n) {
    if (n > 2) throw std::runtime_error("too big"); // marker: throws
}

int main(int argc, char **argv) {
    std::vector<int> numbers = {1, 2, 3};
    std::map<std::string, int> ages = {{"ann", 31}, {"bob", 42}};
    std::string greeting = "hello";
    std::vector<Item> items = {{1, "one"}, {2, "two"}};
    int sum = total(numbers);
    std::cout << greeting << " " << sum << " " << ages.size() << " " << items.size() << std::endl; // marker: print
    if (argc > 1 && std::string(argv[1]) == "throw") {
        try {
            check(sum);
        } catch (const std::exception &e) {
            std::cout << "caught " << e.what() << std::endl;
        }
    }
    return 0;
}
