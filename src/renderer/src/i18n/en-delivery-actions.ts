/** Retry now, Cancel, why a delivery waits, and how a retry turned out (Deliveries and the transcript): English. */
export const enDeliveryActions = {
  confirm: {
    title: 'Cancel this delivery?',
    why: 'This reply will never be sent, and nothing brings it back. Replies after it in the conversation then go.',
    keep: 'Keep it',
  },
  retryNow: 'Retry now',
  retryNowWhy: 'Try it now, as an extra try. If it fails, the next try waits the same step again: the schedule does not move on.',
  cancelDelivery: 'Cancel delivery',
  cancelWhy: 'Never send this reply. Replies after it in the conversation then go.',
  nextTry: 'next try {{time}}',
  behindFailing: 'waiting behind an earlier reply that is failing (next try {{time}})',
  behindSending: 'waiting behind an earlier reply that is being sent',
  held: {
    failing: 'Delivery: waiting behind an earlier reply that is failing (next try {{time}})',
    sending: 'Delivery: waiting behind an earlier reply that is being sent',
  },
  reply: {
    failing: 'reply made, waiting behind an earlier reply that is failing (next try {{time}})',
    sending: 'reply made, waiting behind an earlier reply that is being sent',
  },
  sending: 'Sending…',
  lineSending: 'Delivery: sending…',
  failedAgain: 'Failed again',
  // A retried delivery's result, on its row and its transcript line.
  result: {
    delivered: 'Retried: delivered',
    failed: 'Retried: failed again ({{why}})',
    cancelled: 'Retried, then cancelled',
  },
  summary_one: 'Retried {{count}}: {{parts}}',
  summary_other: 'Retried {{count}}: {{parts}}',
  part: {
    delivered_one: '{{count}} delivered',
    delivered_other: '{{count}} delivered',
    failed_one: '{{count}} failed again ({{why}})',
    failed_other: '{{count}} failed again ({{why}})',
    cancelled_one: '{{count}} cancelled meanwhile',
    cancelled_other: '{{count}} cancelled meanwhile',
    waiting_one: '{{count}} still waiting',
    waiting_other: '{{count}} still waiting',
  },
  separator: ', ',
  queuedSending_one: '{{count}} delivery queued again. Sending…',
  queuedSending_other: '{{count}} deliveries queued again. Sending…',
  cancelled: 'Cancelled: that reply will not be sent.',
  cancelledBy: 'cancelled by {{name}} from the console',
};
