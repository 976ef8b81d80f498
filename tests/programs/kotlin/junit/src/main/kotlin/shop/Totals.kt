package shop

/** The code under test: a total whose discount starts one item late. */
data class Line(val price: Int, val quantity: Int)

fun total(lines: List<Line>): Int {
    val items = lines.sumOf { it.quantity }
    val sum = lines.sumOf { it.price * it.quantity }
    return if (items > 10) sum * 9 / 10 else sum
}
