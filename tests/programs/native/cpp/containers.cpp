// STL containers the debugger must show as values, not as their implementation.
#include <iostream>
#include <map>
#include <string>
#include <vector>

int total(const std::vector<int> &values) {
    int sum = 0;
    for (int v : values) {
        sum += v;
    }
    return sum;
}

int main() {
    std::vector<int> numbers = {10, 20, 30};
    std::map<std::string, int> ages = {{"alice", 31}, {"bob", 27}};
    std::string name = "polydbg";
    int sum = total(numbers);
    std::cout << name << " " << sum << " " << ages.size() << std::endl;  // after containers
    return 0;
}
