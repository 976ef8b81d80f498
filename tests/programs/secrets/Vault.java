// Secrets in a Java object's fields (tests/integration/test_secrets.py); the literals stay out of the stop's excerpt.
public class Vault {
    private String user = "bob";
    private String password = "hunter2-java-field";
    private String authority = "ca.example";
    private static final String JWT =
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
    //
    //

    public static void main(String[] args) {
        Vault vault = new Vault();
        String jwt = JWT;
        System.out.println(vault.user + " " + jwt.length());  // stop here
    }
}
