package parse;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/** A small "library" class: its maps are read by elements, its frames found without a breakpoint. */
public class Tokens {
    private final Map<String, Integer> seen = new IdentityHashMap<>();
    private final Map<String, Integer> counts = new HashMap<>();

    public static List<String> split(String line) {
        List<String> out = new ArrayList<>();
        for (String word : line.split(" ")) {
            out.add(word);
        }
        return out;
    }

    public void count(String word) {
        seen.put(word, word.length());
        counts.merge(word, 1, Integer::sum);
        int total = counts.size();  // counted
    }
}
