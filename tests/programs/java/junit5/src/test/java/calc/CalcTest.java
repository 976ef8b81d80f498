package calc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CalcTest {
    @Test
    void parsesTrimmed() {
        assertEquals(42, Calc.parse(" 42 "));
    }

    @Test
    void meanRounds() {
        int[] values = {1, 2};
        long got = Calc.mean(values);
        assertEquals(2, got, "the mean of 1 and 2 rounds up");  // mean check
    }

    @Test
    void parsesHex() {
        String text = "0x1F";
        assertEquals(31, Calc.parse(text));  // hex check
    }

    @Test
    void refusesWords() {
        assertThrows(NumberFormatException.class, () -> Calc.parse("four"));
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4})
    void meanOfOne(int value) {
        assertEquals(value, Calc.mean(value));  // parameterized check
        assertEquals(0, value % 3, "divisible by three");
    }

    @Nested
    class Empty {
        @Test
        void meanOfNothing() {
            assertEquals(0, Calc.mean());  // nested check
        }
    }
}
