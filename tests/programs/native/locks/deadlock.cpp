// Two threads that take two std::mutex in opposite orders (std::lock_guard) and deadlock; main stops once both
// are stuck.
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

std::mutex ledger;
std::mutex journal;
static std::atomic<int> holding{0};
static std::atomic<pid_t> tids[2];

static void post() {
    tids[0] = gettid();
    std::lock_guard<std::mutex> first(ledger);
    holding++;
    while (holding < 2) {
    }
    std::lock_guard<std::mutex> second(journal);  // post blocks
}

static void reconcile() {
    tids[1] = gettid();
    std::lock_guard<std::mutex> first(journal);
    holding++;
    while (holding < 2) {
    }
    std::lock_guard<std::mutex> second(ledger);  // reconcile blocks
}

// Whether the thread sleeps in the futex system call (202 on x86-64): blocked acquiring a mutex.
static bool in_futex(pid_t tid) {
    char path[64], text[32] = "";
    std::snprintf(path, sizeof path, "/proc/self/task/%d/syscall", static_cast<int>(tid));
    FILE *file = std::fopen(path, "r");
    if (file == nullptr) {
        return false;
    }
    size_t got = std::fread(text, 1, sizeof text - 1, file);
    std::fclose(file);
    text[got] = 0;
    return std::strncmp(text, "202 ", 4) == 0;
}

int main() {
    std::thread a(post), b(reconcile);
    for (auto &tid : tids) {
        while (tid == 0 || !in_futex(tid)) {
            usleep(1000);
        }
    }
    std::puts("both stuck");  // both stuck
    std::fflush(stdout);
    a.join();
    b.join();
}
