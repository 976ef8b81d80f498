// Throws std::out_of_range from inside libstdc++ (vector::at), under a long template type.
#include <vector>
#include <map>
#include <string>
int pick(const std::vector<std::map<std::string, std::vector<int>>> &v, int i) {
    return v.at(i).size(); // marker: bad index
}
int main() {
    std::vector<std::map<std::string, std::vector<int>>> v(2);
    return pick(v, 5);
}
