.PHONY: demo test setup

setup:
	bash scripts/setup.sh

demo: setup
	bash scripts/demo.sh

test:
	bash scripts/test.sh
