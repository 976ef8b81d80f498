"""Java (and Kotlin) over JDWP."""
