public class Thrower {
    static int parse(String text) {
        int value = Integer.parseInt(text);
        return value * 2;
    }

    static void check(int level) {
        if (level > 2) {
            throw new IllegalStateException("level too high: " + level);
        }
    }

    public static void main(String[] args) {
        try {
            parse("x1");
        } catch (NumberFormatException e) {
            System.out.println("caught " + e.getMessage());
        }
        Runnable task = () -> {
            int inLambda = 41;
            System.out.println("lambda " + (inLambda + 1));
        };
        task.run();
        check(3);
    }
}
