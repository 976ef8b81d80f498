import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** What the Java evaluator, conditions, logpoints and set_variable are tested on. */
public class Eval {
    static final String GREETING = "hi";
    static int counter = 7;

    static class Animal {
        protected String name;
        Animal(String name) { this.name = name; }
        String speak() { return name + " makes a sound"; }
        int legs() { return 4; }
    }

    static class Bird extends Animal {
        Bird(String name) { super(name); }
        @Override String speak() { return name + " sings"; }
        @Override int legs() { return 2; }
    }

    static int twice(int x) { return 2 * x; }
    static long twice(long x) { return 3L * x; }
    static String twice(String s) { return s + s; }

    static int boom(int x) {
        if (x > 0) {
            throw new IllegalStateException("boom " + x);
        }
        return x; // inside boom
    }

    /** Returns once a file exists at path: a call that runs for as long as a test wants. */
    static String until(String path) throws InterruptedException {
        while (!new java.io.File(path).exists()) {
            Thread.sleep(10);
        }
        return "released";
    }

    public static void main(String[] args) {
        String name = "héllo";
        int count = 5;
        long big = 1L << 40;
        double ratio = 0.25;
        char letter = 'Q';
        boolean flag = true;
        int[] numbers = {3, 1, 4};
        int[] empty = new int[0];
        Animal pet = new Bird("tweety");
        List<String> words = new ArrayList<>();
        words.add("alpha");
        Map<String, Integer> ages = new HashMap<>();
        ages.put("ann", 31);
        Integer boxed = 42;
        Object nothing = null;
        int total = 0;
        for (int i = 0; i < 10; i++) {
            total += i; // loop body
        }
        int after = total; // after loop
        System.out.println("name=" + name + " count=" + count + " big=" + big + " ratio=" + ratio + " flag=" + flag
                + " numbers[1]=" + numbers[1] + " pet=" + pet.name + " counter=" + counter + " total=" + total
                + " boxed=" + boxed + " empty=" + empty.length + words + ages + letter + nothing + after);
        boom(0);
    }
}
