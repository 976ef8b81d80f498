package parse;

/** Its message is built by getMessage(): detailMessage stays null, as jopt-simple's exceptions do. */
public class BadOption extends RuntimeException {
    private final String option;

    public BadOption(String option) {
        this.option = option;
    }

    @Override
    public String getMessage() {
        return option + " is not a known option";
    }
}
