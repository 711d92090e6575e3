from copyaudit.cli.main import main

main()
