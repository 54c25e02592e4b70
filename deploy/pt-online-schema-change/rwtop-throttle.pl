# rwtop's throttle for pt-online-schema-change: the copy pauses while rwtop's GET /throttle
# answers "throttle", judged on rwtop's heartbeat lag of every replica it watches, never on
# Seconds_Behind_Master (which a stalled replication link keeps at 0). docs/throttle.md has the
# whole story.
#
#   RWTOP_URL=http://127.0.0.1:9899 pt-online-schema-change \
#       --plugin /path/to/rwtop-throttle.pl --alter "..." --execute D=shop,t=orders
#
# Settings, from the environment (pt-online-schema-change passes plugins no options):
#   RWTOP_URL       required: rwtop's --metrics-listen address, http://HOST:PORT or HOST:PORT
#   RWTOP_MAX_LAG   the lag limit, as rwtop reads a duration (500ms, 1s, 2.5s); unset: the
#                   [throttle] max_lag of rwtop's config (1s unless set)
#   RWTOP_REPLICAS  only these rwtop node names, comma-separated; unset: rwtop's [throttle]
#   RWTOP_SKIP      never these node names, comma-separated
#   RWTOP_TIMEOUT   seconds one request may take (default 2)
#
# What it does: pt-online-schema-change asks get_slave_lag's function about each replica it
# found after every chunk. The function asks rwtop (one GET, at most 2 s) and answers 0 when rwtop
# says go, and undef when rwtop says throttle, cannot be reached or answers anything else: pt-osc
# then waits (--check-interval) and asks again, for as long as it takes. It words each wait as
# "Replica ... is stopped. Waiting."; this plugin prints rwtop's reason on the line before it,
# when a pause begins, every 30 s during it and when it ends. pt-osc's own --max-lag is not used.
# pt-osc only asks about replicas it found (--recursion-method, or --check-slave-lag): with none,
# it never asks, so give it at least one.
#
# Core Perl only (HTTP::Tiny, Time::HiRes).

package pt_online_schema_change_plugin;

use strict;
use warnings FATAL => 'all';

use HTTP::Tiny;
use Time::HiRes qw(time);

# How often a pause that goes on is reported again.
my $REPEAT_EVERY = 30;

sub new {
   my ($class, %args) = @_;
   my $base = $ENV{RWTOP_URL};
   if ( !defined $base || $base eq '' ) {
      die "rwtop-throttle: RWTOP_URL is not set: set it to rwtop's --metrics-listen "
        . "address, e.g. RWTOP_URL=http://127.0.0.1:9899\n";
   }
   $base = "http://$base" unless $base =~ m{^https?://}i;
   $base =~ s{/+$}{};
   my @params;
   foreach my $pair ( [max_lag => 'RWTOP_MAX_LAG'], [replicas => 'RWTOP_REPLICAS'],
                      [skip => 'RWTOP_SKIP'] ) {
      my ($name, $var) = @$pair;
      my $value = $ENV{$var};
      push @params, "$name=" . _escape($value) if defined $value && $value ne '';
   }
   my $timeout = $ENV{RWTOP_TIMEOUT} || 2;
   if ( $timeout !~ /^\d+(?:\.\d+)?$/ || $timeout <= 0 ) {
      die "rwtop-throttle: RWTOP_TIMEOUT is '$timeout': give a number of seconds, e.g. 2\n";
   }
   my $self = bless {
      url     => "$base/throttle" . (@params ? '?' . join('&', @params) : ''),
      http    => HTTP::Tiny->new(timeout => $timeout, agent => 'rwtop-throttle-pt-osc/1'),
      paused  => undef,   # when the current pause began
      said_at => 0,       # when the current pause was last reported
      said    => '',      # what kind of pause was last reported
   }, $class;

   # Asked once before anything changes: a wrong address or a refused request stops pt-osc here.
   my ($status, $reason) = $self->_ask();
   if ( $status == 599 ) {
      die "rwtop-throttle: cannot reach rwtop at $self->{url}: $reason. Start rwtop with "
        . "--metrics-listen (rwtop serve or the live view), or set RWTOP_URL to that address\n";
   }
   if ( $status == 400 ) {
      die "rwtop-throttle: rwtop refused $self->{url}: $reason\n";
   }
   if ( $status != 200 && $status != 503 ) {
      die "rwtop-throttle: $self->{url} answered $status, not rwtop's throttle: is RWTOP_URL "
        . "rwtop's --metrics-listen address?\n";
   }
   print "rwtop-throttle: asking $self->{url}; now: "
       . ($status == 200 ? 'go' : 'throttle') . ": $reason\n";
   return $self;
}

sub get_slave_lag {
   my ($self, %args) = @_;
   return sub {
      my ($cxn) = @_;
      my ($status, $reason) = $self->_ask();
      my $now = time;
      if ( $status == 200 ) {
         if ( defined $self->{paused} ) {
            printf STDERR "rwtop-throttle: go after %.1f s: %s\n", $now - $self->{paused},
               $reason;
            $self->{paused} = undef;
            $self->{said}   = '';
         }
         return 0;
      }
      my ($kind, $line) = $status == 503 ? ('throttle', "throttle: $reason")
                        : $status == 599 ? ('unreachable',
                             "cannot reach rwtop at $self->{url} ($reason): pausing until it answers")
                        :                  ('refused',
                             "rwtop answered $status ($reason): pausing until it says go");
      $self->{paused} = $now unless defined $self->{paused};
      if ( $kind ne $self->{said} || $now - $self->{said_at} >= $REPEAT_EVERY ) {
         print STDERR "rwtop-throttle: $line\n";
         $self->{said}    = $kind;
         $self->{said_at} = $now;
      }
      return undef;   # pt-osc waits, then asks again
   };
}

# The status and rwtop's one-line reason (the first line of the body, its verdict word taken
# off); HTTP::Tiny's own failures come back as status 599 with the error as the body.
sub _ask {
   my ($self) = @_;
   my $response = $self->{http}->get($self->{url});
   my $status = $response->{status};
   my ($line) = split /\n/, (defined $response->{content} ? $response->{content} : '');
   $line = '' unless defined $line;
   $line =~ s/^(?:go|throttle|bad request): //;
   $line = $response->{reason} || 'no reason given' if $line eq '';
   return ($status, $line);
}

sub _escape {
   my ($text) = @_;
   $text =~ s/([^A-Za-z0-9_.~:,-])/sprintf('%%%02X', ord $1)/ge;
   return $text;
}

1;
