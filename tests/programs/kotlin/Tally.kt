// Reload's target in Kotlin: a loop calling a method an edit fixes while the program is stopped inside it.
package demo.reload

class Tally {
    var calls = 0

    fun score(round: Int): Int {
        calls++
        val points = round * 10 // score
        return points
    }
}

fun label(round: Int): String = "round $round" // label

fun main() {
    val tally = Tally()
    (1..4).forEach { round ->
        val points = tally.score(round)
        println("${label(round)}: $points")
    }
    println("calls ${tally.calls}")
}
