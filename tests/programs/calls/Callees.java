// A call trace's callees on the JVM: a recorded method calling two helpers of the program's (one through a stream,
// whose JDK frames lie between, one recursive), a helper that throws, and the JDK's own methods (not recorded).
import java.util.List;

public class Callees {
    static int total(List<String> words) {
        int sum = words.stream().mapToInt(Callees::weight).sum();
        try {
            sum += weight("x");
        } catch (NumberFormatException err) {
            sum -= 1;
        }
        return sum + countdown(2);
    }

    static int weight(String word) {
        return Integer.parseInt(word.trim()) * 2;
    }

    static int countdown(int n) {
        if (n == 0) return 0;
        return 1 + countdown(n - 1);
    }

    public static void main(String[] args) {
        System.out.println("total " + total(List.of("1", " 2")));
        System.out.println("after " + weight("5") + " " + countdown(1));
    }
}
