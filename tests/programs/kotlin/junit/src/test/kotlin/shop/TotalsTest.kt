package shop

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

class TotalsTest {
    @Test
    fun `one line is its price`() {
        assertEquals(300, total(listOf(Line(100, 3))))
    }

    @Test
    fun bulkIsDiscounted() {
        val lines = listOf(Line(100, 4), Line(100, 6))
        val got = total(lines)
        assertEquals(900, got, "ten items are discounted")  // kotlin check
    }
}
