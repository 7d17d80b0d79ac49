from qbo.cli.app import main

main()
