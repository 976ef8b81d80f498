// C++ callees under gdb and lldb: methods (one throwing through its caller to the recorded function's catch), a
// template, a constructor, a virtual call (not followed: the template it calls is not recorded there), and
// std::vector's own methods (libstdc++'s: not callees).
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

template <typename T>
T twice(T x) {
    return x + x;
}

struct Shape {
    virtual ~Shape() = default;
    virtual int area() const = 0;
};

struct Square : Shape {
    int side;
    explicit Square(int s) : side(s) {}
    int area() const override { return twice(side) * side / 2; }
};

class Inventory {
public:
    int add(const std::string& name, int count) {
        check(count);
        items_.push_back(name);
        return twice(count);
    }
    int size() const { return static_cast<int>(items_.size()); }

private:
    void check(int count) {
        if (count < 0) throw std::invalid_argument("negative count");
    }
    std::vector<std::string> items_;
};

int stock(Inventory& inventory) {
    int added = inventory.add("bolt", 2) + inventory.add("nut", 3);
    try {
        inventory.add("washer", -1);
    } catch (const std::invalid_argument&) {
        added -= 1;
    }
    Square square(3);
    const Shape& shape = square;
    return added + shape.area() + inventory.size();
}

int main() {
    Inventory inventory;
    std::printf("stock %d\n", stock(inventory));
    return 0;
}
