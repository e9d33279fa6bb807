#!/bin/sh
# The cluster profile's standby streams from this server: replication connections with a password.
echo "host replication all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
