# Extra dependency lines: CHECK DEBIAN-PACKAGE BREW-FORMULA (see deps.sh)
c:python3                  python3               python3
