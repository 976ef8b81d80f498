// A call trace's subjects on the JVM: a recursive method, a method that throws (its caller catches it),
// a class loaded as the program runs (Dates), and a thread of its own.
public class Calls {
    static int fib(int n) {
        if (n < 2) return n;
        return fib(n - 1) + fib(n - 2);
    }

    static class Parser {
        int parse(String text) {
            if (text.isEmpty()) throw new IllegalArgumentException("empty input");
            return text.length();
        }
    }

    static int parseAll(Parser parser, String[] texts) {
        int parsed = 0;
        for (String text : texts) {
            try {
                parser.parse(text);
                parsed += 1;
            } catch (IllegalArgumentException err) {
                System.out.println("skipped: " + err.getMessage());
            }
        }
        return parsed;
    }

    static int square(int x) {
        return x * x;
    }

    public static void main(String[] args) throws InterruptedException {
        System.out.println("fib " + fib(6));
        System.out.println("parsed " + parseAll(new Parser(), new String[] {"ab", "", "xyz"}));
        System.out.println("month " + Dates.monthOf("2024-03-09"));
        Thread worker = new Thread(() -> {
            int total = 0;
            for (int i = 1; i <= 4; i++) total += square(i);
            System.out.println("worker " + total);
        }, "squares");
        worker.start();
        worker.join();
    }
}

class Dates {
    static int monthOf(String date) {
        int month = Integer.parseInt(date.split("-")[1]);
        if (month > 12) throw new IllegalArgumentException("no month " + month);
        return month;
    }
}
