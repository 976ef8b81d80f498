// Two threads that lock two std::sync::Mutex in opposite orders and deadlock; main stops once both are stuck.
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

static SAVINGS: Mutex<i64> = Mutex::new(100);
static CHECKING: Mutex<i64> = Mutex::new(50);
static HOLDING: AtomicUsize = AtomicUsize::new(0);
static TIDS: [AtomicI32; 2] = [AtomicI32::new(0), AtomicI32::new(0)];

fn gettid() -> i32 {
    std::fs::read_link("/proc/thread-self").ok()
        .and_then(|p| p.file_name().and_then(|n| n.to_str()).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

fn transfer(index: usize, from: &'static Mutex<i64>, to: &'static Mutex<i64>) {
    TIDS[index].store(gettid(), Ordering::SeqCst);
    let mut source = from.lock().unwrap();
    HOLDING.fetch_add(1, Ordering::SeqCst);
    while HOLDING.load(Ordering::SeqCst) < 2 {}
    let mut target = to.lock().unwrap(); // transfer blocks
    *source -= 10;
    *target += 10;
}

/// Whether the thread sleeps in the futex system call (202 on x86-64): blocked acquiring a mutex.
fn in_futex(tid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/syscall")).map(|s| s.starts_with("202 ")).unwrap_or(false)
}

fn main() {
    let a = thread::Builder::new().name("saver".into()).spawn(|| transfer(0, &SAVINGS, &CHECKING)).unwrap();
    let b = thread::Builder::new().name("spender".into()).spawn(|| transfer(1, &CHECKING, &SAVINGS)).unwrap();
    for tid in &TIDS {
        while tid.load(Ordering::SeqCst) == 0 || !in_futex(tid.load(Ordering::SeqCst)) {
            thread::sleep(Duration::from_millis(1));
        }
    }
    println!("both stuck"); // both stuck
    a.join().unwrap();
    b.join().unwrap();
}
