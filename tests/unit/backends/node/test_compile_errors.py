"""esbuild's TransformError text (what tsx throws for a .ts file that does not parse) as a build error:
each error's file:line:column, message and source line; anything else is not one."""

from __future__ import annotations

from pathlib import Path

from polydbg.backends.node.compile_errors import describe, is_compile_error


def _thrown(path: Path, line: int, column: int, message: str) -> str:
    return (f"Error: Transform failed with 1 error:\n{path}:{line}:{column}: ERROR: {message}\n"
            "    at failureErrorWithLog (/app/node_modules/esbuild/lib/main.js:1467:15)")


def test_an_error_reads_as_its_file_line_message_and_source(tmp_path: Path) -> None:
    source = tmp_path / "src" / "app.ts"
    source.parent.mkdir()
    source.write_text("const a = 1;\nconst b = (a;\n")
    said = describe(_thrown(source, 2, 12, 'Expected ")" but found ";"'), str(tmp_path))
    assert said == ("TypeScript did not compile: tsx (esbuild) refused src/app.ts\n"
                    'src/app.ts:2:13: Expected ")" but found ";"\n'
                    "    2 | const b = (a;\n"
                    "      |             ^")


def test_an_es_modules_file_is_found_under_its_own_extension(tmp_path: Path) -> None:
    module = tmp_path / "job.mts"
    module.write_text("export const x = ;\n")
    said = describe(_thrown(tmp_path / "job.ts", 1, 17, 'Unexpected ";"'), str(tmp_path)) or ""
    assert "job.mts:1:18: Unexpected" in said and "export const x = ;" in said, said


def test_what_is_not_a_compile_error_is_not_one() -> None:
    assert not is_compile_error("Error: limit 3 exceeded")
    assert describe("TypeError: x is not a function", None) is None
    assert describe("Error: Transform failed with 1 error:\n(no location)", None) is None
