// Values the debugger must show as Rust (String, Vec, Option, HashMap, enums), and a panic.
use std::collections::HashMap;

#[derive(Debug)]
enum Shape {
    Circle { radius: f64 },
    Square(u32),
}

fn describe(shapes: &[Shape]) -> f64 {
    let mut area = 0.0;
    for shape in shapes {
        area += match shape {
            Shape::Circle { radius } => 3.0 * radius * radius,
            Shape::Square(side) => f64::from(side * side),
        };
    }
    area // after describe
}

struct Node {
    value: i32,
    next: Option<Box<Node>>,
}

fn walk(head: &Option<Box<Node>>, label: &&str) -> i32 {
    let mut total = label.len() as i32;
    let mut cur = head;
    while let Some(node) = cur {
        total += node.value; // in walk
        cur = &node.next;
    }
    total
}

fn checked_divide(a: i32, b: i32) -> i32 {
    if b == 0 {
        panic!("division by zero: {} / {}", a, b); // panics here
    }
    a / b
}

fn main() {
    let greeting = String::from("hello");
    let numbers: Vec<i32> = vec![1, 2, 3];
    let maybe: Option<i32> = Some(42);
    let nothing: Option<i32> = None;
    let mut scores: HashMap<String, i32> = HashMap::new();
    scores.insert(String::from("alice"), 10);
    let shapes = vec![Shape::Circle { radius: 1.5 }, Shape::Square(4)];
    let n = describe(&shapes); // values ready
    let list = Some(Box::new(Node { value: 1, next: Some(Box::new(Node { value: 2, next: None })) }));
    let walked = walk(&list, &"list");
    assert_eq!(walked, 7);
    println!("{} {:?} {:?} {:?} {:?} {}", greeting, numbers, maybe, nothing, scores, n);
    let divisor = std::env::args().count() as i32 - 2; // 0 when one argument is passed
    println!("{}", checked_divide(10, divisor));
}
