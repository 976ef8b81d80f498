// The conformance program (the same computation as conformance.py, .c, .cpp and go/): prints and exits with 13.

fn add(a: i32, b: i32) -> i32 { // add starts
    let total = a + b; // in add
    total
}

fn main() {
    let x = 3;
    let y = 4;
    let mut s = add(x, y); // call add
    for i in 0..4 { // loop
        s += i; // loop body
    }
    println!("result {s}"); // print result
    while std::env::args().len() > 1 { // with an argument, stay until killed
        std::thread::sleep(std::time::Duration::from_secs(60));
    }
    std::process::exit(s);
}
