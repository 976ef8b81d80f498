// A call trace's callees on the JVM: a recorded method calling two helpers of the program's (one through a stream,
// whose JDK frames lie between, one recursive), a helper that throws, one whose recursion throws from its bottom
// (caught by it), and the JDK's own methods (not recorded);
// and a method whose object the JVM has dropped by the time its exit is read.
import java.util.List;

public class Callees {
    static int total(List<String> words) {
        int sum = words.stream().mapToInt(Callees::weight).sum();
        try {
            sum += weight("x");
        } catch (NumberFormatException err) {
            sum -= 1;
        }
        return sum + safeDepth(3) + countdown(2);
    }

    static int safeDepth(int n) {
        try {
            return dive(n);
        } catch (IllegalStateException err) {
            return -1;
        }
    }

    static int dive(int n) {
        if (n == 0) throw new IllegalStateException("bottom");
        return dive(n - 1);
    }

    static int weight(String word) {
        return Integer.parseInt(word.trim()) * 2;
    }

    static int countdown(int n) {
        if (n == 0) return 0;
        return 1 + countdown(n - 1);
    }

    static List<String> letters(String word) {
        return List.of(word.split(""));
    }

    public static void main(String[] args) {
        System.out.println("total " + total(List.of("1", " 2")));
        System.out.println("after " + weight("5") + " " + countdown(1));
        System.out.println(letters("ab").size());  // the last call: the JVM ends right after it returns
    }
}
