package calc;

/** The code under test: integer parsing and a mean that rounds down where it should round. */
public final class Calc {
    private Calc() {
    }

    public static int parse(String text) {
        return Integer.parseInt(text.trim());
    }

    public static long mean(int... values) {
        long sum = 0;
        for (int value : values) {
            sum += value;
        }
        return sum / values.length;
    }
}
