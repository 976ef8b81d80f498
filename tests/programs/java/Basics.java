import java.util.ArrayList;
import java.util.List;

public class Basics {
    static int calls = 0;

    static class Point {
        final int x;
        final int y;
        Point(int x, int y) { this.x = x; this.y = y; }
        int norm1() {
            int total = Math.abs(x) + Math.abs(y);
            return total;
        }
    }

    static int square(int n) {
        calls++;
        int result = n * n;
        return result;
    }

    public static void main(String[] args) {
        String name = "héllo 🌍";
        int[] numbers = {3, 1, 4};
        List<String> words = new ArrayList<>();
        words.add("alpha");
        words.add("beta");
        Point p = new Point(2, -5);
        long big = 1L << 40;
        double ratio = 0.5;
        boolean flag = true;
        int sum = 0;
        for (int i = 0; i < numbers.length; i++) {
            sum += square(numbers[i]);
        }
        System.out.println("sum " + sum + " norm " + p.norm1() + " " + name + " " + words + " " + big + ratio + flag);
        if (args.length > 0) {
            System.exit(Integer.parseInt(args[0]));
        }
    }
}
