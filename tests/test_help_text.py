"""A flag's help text, read out of the source that declares it, is a passage of its own."""
from __future__ import annotations

import subprocess

from loci_pipeline.collect import collect_scope
from loci_pipeline.help_text import help_strings

CLAP = '''\
    /// Follow symbolic links
    #[arg(
        long,
        short = 'L',
        long_help = "By default, fd does not descend into symlinked directories. Using this \\
                     flag, symbolic links are also traversed. \\
                     Flag can be overridden with --no-follow."
    )]
    pub follow: bool,
'''


def test_a_clap_long_help_split_over_lines_is_one_text_at_its_keyword_line():
    assert help_strings(CLAP) == [
        (5, "--follow, -L", "By default, fd does not descend into symlinked directories. Using this flag, "
                            "symbolic links are also traversed. Flag can be overridden with --no-follow."),
    ]


def test_click_help_joins_adjacent_literals_and_reads_escapes():
    src = ('@click.option(\n    "--fast/--safe",\n    is_flag=True,\n'
           '    help="If --fast given, skip temporary "\n    "sanity checks. [default: --safe]\\n",\n)\n')
    assert help_strings(src) == [(4, "--fast/--safe", "If --fast given, skip temporary sanity checks. [default: --safe]")]


def test_the_flags_of_the_same_call_name_the_help_but_not_a_neighbours():
    src = ('    click.option("--nl", is_flag=True, help="Expect newline-delimited JSON"),\n'
           '    click.option("-c", "--csv", is_flag=True, help="Expect CSV input rows"),\n'
           '    parser.add_argument("--level", default="info level", help="how much the tool says"),\n')
    assert help_strings(src) == [(1, "--nl", "Expect newline-delimited JSON"),
                                 (2, "-c, --csv", "Expect CSV input rows"),
                                 (3, "--level", "how much the tool says")]


def test_go_usage_fields_with_plus_and_raw_strings():
    src = ('var f = &cli.BoolFlag{\n\tName:  "stdin",\n\tUsage: "read the arguments " +\n'
           '\t\t"from standard input",\n}\n'
           'var c = &cobra.Command{\n\tShort: "x",\n\tLong: `Serve the site\nfrom a folder`,\n}\n')
    assert help_strings(src) == [
        (3, "--stdin", "read the arguments from standard input"),
        (8, "", "Serve the site from a folder"),
    ]


def test_short_names_comparisons_and_non_literals_are_not_help():
    src = ('help="Port"\n'                      # too short to say more than its name
           'if usage == "print the usage text": pass\n'
           'description = build_description(cmd)\n'
           'parser.help: "not closed\n'
           'x.usage = "a b c"\n')              # an attribute, not a keyword
    assert help_strings(src) == []


def test_collect_keeps_a_flags_help_text_as_a_passage_but_not_in_tests_or_examples(tmp_path):
    root = tmp_path / "tool"
    (root / "src").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "src" / "cli.rs").write_text("pub struct Opts {\n" + CLAP + "}\n")
    (root / "tests" / "test_cli.py").write_text(
        'import click\n@click.option("--x", help="a test only flag with words")\ndef f(x): pass\n')
    (root / "examples").mkdir()
    (root / "examples" / "pizza.js").write_text("program.option('-c, --cheese <type>', 'add extra cheese please');\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    got = collect_scope("tool", root)
    helps = [(c.kind, c.path, c.line, c.heading) for c in got.chunks if "symlinked directories" in c.text]
    assert ("comment", "src/cli.rs", 6, "--follow, -L") in helps
    assert not [c for c in got.chunks if "test only flag" in c.text or "extra cheese" in c.text]


def test_a_format_template_is_not_help():
    assert help_strings('help = "{} {} {}"\nusage: "%s %s %s %s"\n') == []


def test_a_flag_nested_in_an_argument_of_the_call_is_not_the_help_texts():
    src = ('@click.command(\n    context_settings={"help_option_names": ["-h", "--help"]},\n'
           '    help="The uncompromising code formatter.",\n)\n')
    assert help_strings(src) == [(3, "", "The uncompromising code formatter.")]


def test_a_generated_file_of_help_keys_is_read_up_to_a_bound():
    from loci_pipeline.help_text import MAX_HELP

    src = "var a = " + "".join(f'description: "the thing number {i} here", ' for i in range(3 * MAX_HELP)) + "\n"
    got = help_strings(src)
    assert len(got) == MAX_HELP and got[0] == (1, "", "the thing number 0 here")


def test_a_commander_option_names_its_flags_first_and_its_help_second():
    src = ("program\n  .option('-p, --port <number>', 'port number to listen on', 80)\n"
           "  .addOption(new Option('--disable-server', 'disables the server entirely').conflicts('port'))\n"
           "  .requiredOption('-c, --cheese <type>', 'pizza must have cheese');\n"
           "program.command('serve').description('start the web server in the foreground');\n"
           "  .option('--pond')\n"
           " * program.option('-t, --tip <VALUE>', 'add tip to purchase cost')\n")   # a doc comment's example
    assert help_strings(src) == [
        (2, "-p, --port <number>", "port number to listen on"),
        (3, "--disable-server", "disables the server entirely"),
        (4, "-c, --cheese <type>", "pizza must have cheese"),
        (5, "", "start the web server in the foreground"),
    ]
