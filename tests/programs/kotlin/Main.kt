package demo.shapes

import kotlin.system.exitProcess

data class Point(val x: Int, val y: Int) {
    fun norm1(): Int {
        val total = Math.abs(x) + Math.abs(y)
        return total // norm1: return
    }
}

class Counter(private val label: String) {
    var count = 0

    fun add(amount: Int): Int {
        val before = count
        count = before + amount // Counter.add: count
        return count
    }
}

fun square(n: Int): Int {
    val result = n * n
    return result // square: return
}

fun validate(total: Int) {
    check(total < 20) { "total too high: $total" } // validate: check
}

fun main(args: Array<String>) {
    val name = "héllo 🌍"
    val numbers = listOf(3, 1, 4)
    val counter = Counter("clicks")
    var sum = 0
    numbers.forEach { value ->
        val squared = square(value) // forEach: square
        sum += squared
    }
    val doubled = numbers.sumOf { it * 2 } // one line: sumOf
    val twice: (Int) -> Int = { x ->
        x * 2 // twice: body
    }
    val p = Point(2, -5)
    val points = listOf(p, Point(-1, 0))
    counter.add(sum) // main: add
    println("sum $sum twice ${twice(sum)} norm ${p.norm1()} $name ${counter.count} $p $doubled")
    if (args.isNotEmpty() && args[0] == "strict") {
        validate(sum)
    } else if (args.isNotEmpty()) {
        exitProcess(args[0].toInt())
    }
}
