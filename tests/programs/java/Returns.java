// Calls whose results a step out of (or over) them reports: a number, a string, a recursive call, a throw.
public class Returns {
    static int add(int a, int b) {
        int total = a + b;
        return total * 2; // add returns
    }

    static String greet(String name) {
        String text = "hi " + name;
        return text;
    }

    static int factorial(int n) {
        if (n <= 1) {
            return 1; // factorial base
        }
        return n * factorial(n - 1); // factorial recurses
    }

    static int checked(int v) {
        if (v < 0) {
            throw new IllegalArgumentException("negative: " + v); // checked throws
        }
        return v;
    }

    public static void main(String[] args) {
        int x = add(1, 2); // first call
        int y = add(x, 3); // second call
        String g = greet("ada"); // greet call
        int f = factorial(3); // factorial call
        int c;
        try {
            c = checked(-1); // checked call
        } catch (IllegalArgumentException e) {
            c = -1; // checked error caught
        }
        System.out.println(x + " " + y + " " + g + " " + f + " " + c);
    }
}
