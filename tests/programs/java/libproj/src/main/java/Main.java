import java.util.*;
import parse.*;

public class Main {
    public static void main(String[] args) {
        Parser parser = new Parser();
        String[] words = {"a b", "c a"};
        int n = parser.parse(words);
        System.out.println("n=" + n);  // after parse
        try {
            parser.parse("--bad");
        } catch (BadOption e) {
            System.out.println("caught " + e.getMessage());
        }
        System.out.println(Arrays.toString(words));
    }
}
