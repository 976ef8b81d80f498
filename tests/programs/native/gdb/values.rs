// A Rust program for the gdb backend tests: std types read through the toolchain's pretty printers.
struct Point {
    x: i32,
    y: i32,
}

fn area(points: &[Point]) -> i32 {
    let mut total = 0;
    for p in points {
        total += p.x * p.y;
    }
    total // marker: area total
}

fn main() {
    let numbers: Vec<i32> = vec![1, 2, 3];
    let name = String::from("gdb");
    let maybe: Option<i32> = Some(7);
    let points = vec![Point { x: 2, y: 3 }, Point { x: 4, y: 5 }];
    let result = area(&points);
    println!("{} {} {:?} {}", numbers.len(), name, maybe, result); // marker: values ready
}
