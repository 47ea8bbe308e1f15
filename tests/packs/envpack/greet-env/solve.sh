#!/bin/bash
set -e
echo "$GREETING from $(id -un)" > greeting.txt
