from ycsb_runner.cli import main

main()
