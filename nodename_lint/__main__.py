from .cli import main

main(prog_name="nodename-lint")  # `python -m nodename_lint` reads, completes and names itself as the script does
