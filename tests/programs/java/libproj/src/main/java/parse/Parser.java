package parse;

public class Parser {
    private final Tokens tokens = new Tokens();

    public int parse(String... words) {
        int n = 0;
        for (String word : words) {
            if (word.startsWith("--bad")) {
                throw new BadOption(word);  // throws
            }
            for (String part : Tokens.split(word)) {
                tokens.count(part);  // parse loop
                n++;
            }
        }
        return n;
    }
}
