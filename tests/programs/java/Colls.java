import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.Vector;
import java.util.concurrent.ConcurrentHashMap;

/** One of each JDK collection the debugger shows by its elements (Colls: java.util.Collections is taken). */
public class Colls {
    /** Keys that all land in one hash bin, so a HashMap turns the bin into a tree. */
    static final class Same implements Comparable<Same> {
        final int id;
        Same(int id) { this.id = id; }
        @Override public int hashCode() { return 7; }
        @Override public boolean equals(Object o) { return o instanceof Same && ((Same) o).id == id; }
        @Override public int compareTo(Same o) { return Integer.compare(id, o.id); }
        @Override public String toString() { return "S" + id; }
    }

    static final class Names extends ArrayList<String> {
        final String label = "mine";
    }

    static String order(Iterable<?> items) {
        StringJoiner joined = new StringJoiner(",");
        for (Object item : items) {
            joined.add(String.valueOf(item));
        }
        return joined.toString();
    }

    public static void main(String[] args) {
        List<String> words = new ArrayList<>(List.of("alpha", "beta"));
        List<String> emptyList = new ArrayList<>();
        List<Integer> bigList = new ArrayList<>();
        for (int i = 0; i < 100_000; i++) {
            bigList.add(i);
        }
        LinkedList<String> linked = new LinkedList<>(List.of("x", "y", "z"));
        LinkedList<Integer> longLinked = new LinkedList<>();
        for (int i = 0; i < 30_000; i++) {
            longLinked.add(i);
        }
        Map<String, Integer> hash = new HashMap<>();
        hash.put("a", 1);
        hash.put("b", 2);
        hash.put("c", 3);
        Map<String, Integer> emptyMap = new HashMap<>();
        Map<String, Integer> manyKeys = new HashMap<>();
        for (int i = 0; i < 200; i++) {
            manyKeys.put("k" + i, i);
        }
        String manyKeysOrder = order(manyKeys.keySet());
        Map<Same, Integer> treeified = new HashMap<>();
        for (int i = 0; i < 70; i++) {
            treeified.put(new Same(i), i);
        }
        String treeifiedOrder = order(treeified.keySet());
        Map<String, Integer> inserted = new LinkedHashMap<>();
        inserted.put("zebra", 1);
        inserted.put("apple", 2);
        inserted.put("mango", 3);
        TreeMap<String, Integer> sorted = new TreeMap<>();
        for (String key : new String[] {"delta", "alpha", "echo", "charlie", "bravo", "golf", "foxtrot"}) {
            sorted.put(key, key.length());
        }
        TreeMap<Integer, Integer> bigTree = new TreeMap<>();
        for (int i = 0; i < 20_000; i++) {
            bigTree.put(i * 7 % 20_000, i);
        }
        Set<String> hashSet = new HashSet<>(List.of("one", "two", "three"));
        String hashSetOrder = order(hashSet);
        Set<String> linkedSet = new LinkedHashSet<>(List.of("c", "a", "b"));
        TreeSet<Integer> treeSet = new TreeSet<>(List.of(5, 3, 9, 1));
        ArrayDeque<String> deque = new ArrayDeque<>();
        deque.add("middle");
        deque.addFirst("front");
        deque.addLast("back");
        Vector<Integer> vector = new Vector<>(List.of(7, 8));
        List<String> unmodifiable = Collections.unmodifiableList(words);
        List<Integer> listOf = List.of(1, 2, 3);
        List<Integer> listOfOne = List.of(42);
        Set<String> setOf = Set.of("p", "q", "r", "s");
        String setOfOrder = order(setOf);
        Set<String> setOfTwo = Set.of("p", "q");
        String setOfTwoOrder = order(setOfTwo);
        Map<String, Integer> mapOf = Map.of("k1", 1, "k2", 2, "k3", 3, "k4", 4);
        String mapOfOrder = order(mapOf.keySet());
        Map<String, Integer> mapOfOne = Map.of("only", 1);
        ConcurrentHashMap<String, Integer> concurrent = new ConcurrentHashMap<>(Map.of("u", 1, "v", 2));
        String concurrentOrder = order(concurrent.keySet());
        Map<String, List<Integer>> nested = new HashMap<>();
        nested.put("evens", List.of(2, 4, 6));
        Names names = new Names();
        names.add("own");
        int[][] grid = {{1, 2, 3}, {4, 5, 6}};
        int[] noInts = {};
        int[] manyInts = new int[100_000];
        for (int i = 0; i < manyInts.length; i++) {
            manyInts[i] = i * 2;
        }
        System.out.println("sizes " + words.size() + bigList.size() + hash.size() + manyInts.length); // stop here
    }
}
