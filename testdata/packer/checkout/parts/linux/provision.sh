#!/bin/sh
echo provisioned
