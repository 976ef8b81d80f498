package demo.shapes

import java.util.concurrent.CountDownLatch
import java.util.concurrent.locks.ReentrantLock
import kotlin.concurrent.thread
import kotlin.concurrent.withLock
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

val left = Any()
val right = Any()
val first = ReentrantLock()
val second = ReentrantLock()

fun grab(mine: Any, theirs: Any, both: CountDownLatch) {
    synchronized(mine) {
        both.countDown()
        both.await()
        synchronized(theirs) { // grab: theirs
            println("never")
        }
    }
}

fun take(mine: ReentrantLock, theirs: ReentrantLock, both: CountDownLatch) {
    mine.withLock {
        both.countDown()
        both.await()
        theirs.withLock { // take: theirs
            println("never")
        }
    }
}

fun deadlock() {
    val monitors = CountDownLatch(2)
    val locks = CountDownLatch(2)
    val stuck = listOf(thread(name = "kt-left", isDaemon = true) { grab(left, right, monitors) },
                       thread(name = "kt-right", isDaemon = true) { grab(right, left, monitors) },
                       thread(name = "kt-first", isDaemon = true) { take(first, second, locks) },
                       thread(name = "kt-second", isDaemon = true) { take(second, first, locks) })
    while (stuck.take(2).any { it.state != Thread.State.BLOCKED } || first.queueLength + second.queueLength < 2) {
        Thread.sleep(5)
    }
    println("stuck") // deadlock: stuck
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
    } else if (args.isNotEmpty() && args[0] == "deadlock") {
        deadlock()
    } else if (args.isNotEmpty()) {
        exitProcess(args[0].toInt())
    }
}
