public class TypedThrows {
    static class AppError extends RuntimeException {
        AppError(String message) { super(message); }
    }

    static class ParseError extends AppError {
        ParseError(String message) { super(message); }
    }

    // builds its message in getMessage(), as JUnit 4's ComparisonFailure does: detailMessage is only the prefix
    static class Mismatch extends AppError {
        final String expected;
        final String actual;

        Mismatch(String expected, String actual) {
            super("values differ");
            this.expected = expected;
            this.actual = actual;
        }

        @Override
        public String getMessage() {
            return super.getMessage() + " expected:<" + expected + "> but was:<" + actual + ">";
        }
    }

    static int parse(String text) {
        if (!text.chars().allMatch(Character::isDigit)) {
            throw new ParseError("not a number: " + text); // raise here
        }
        return Integer.parseInt(text);
    }

    static int lenient(String text) {
        try {
            return parse(text);
        } catch (AppError e) {
            return 0;
        }
    }

    static void compare(String expected, String actual) {
        if (!expected.equals(actual)) {
            throw new Mismatch(expected, actual); // mismatch here
        }
    }

    public static void main(String[] args) {
        try {
            Object nothing = null;
            nothing.hashCode();
        } catch (NullPointerException e) {
            System.out.println("no object");
        }
        System.out.println("lenient " + lenient("x1"));
        try {
            compare("3", "4");
        } catch (AppError e) { // caught in main
            System.out.println("compared: " + e.getMessage());
        }
        System.out.println("strict " + parse("y2"));
    }
}
