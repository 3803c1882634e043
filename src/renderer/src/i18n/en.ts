export const en = {
  app: { title: 'Switchboard', endpoint: 'Endpoint', theme: 'Theme', light: 'Light', dark: 'Dark', language: 'Language' },
  nav: { conversations: 'Conversations', requests: 'Request log' },
  list: {
    search: 'Search messages (/)',
    all: 'All',
    empty: 'No conversations yet. Send a signed message to the endpoint and it appears here at once.',
    noMatch: 'No conversation matches these filters.',
    state: { active: 'Active', paused: 'Paused', stopped: 'Stopped', needs_human: 'Needs human' },
    channel: { im: 'IM', web: 'Web' },
    messages: '{{count}} messages',
  },
  transcript: {
    pick: 'Pick a conversation on the left (j/k to move).',
    stop: 'Stop auto-reply (s)',
    resume: 'Resume auto-reply (r)',
    role: { customer: 'Customer', staff: 'Staff', ai: 'AI', command: 'Command' },
    reason: {
      scheduled: 'Scheduled for a reply',
      sender_not_customer: 'Not answered: sender is not a customer',
      not_mentioned: 'Not answered: the bot was not mentioned',
      auto_reply_stopped: 'Not answered: auto-reply stopped',
      auto_reply_paused: 'Not answered: auto-reply paused (a human spoke)',
      stale_message: 'Not answered: message too old',
      rate_limited: 'Not answered: 6 replies in the last minute',
    },
    outcome: { pending: 'waiting for the quiet period', answered: 'answered', handoff: 'handed to a human', cancelled: 'cancelled', stale: 'became stale' },
    delivery: 'Delivery: {{state}} after {{attempts}} attempt(s)',
    retry: 'Retry delivery',
    handoff: 'No confident answer: needs a human',
    suggestion: 'Suggestion',
  },
  requests: { onlyFailed: 'Rejected only', empty: 'No requests yet.', status: 'Status', code: 'Code', client: 'Client', time: 'Time', latency: 'ms' },
  error: { generic: 'Something went wrong: {{message}}' },
};

export type Messages = typeof en;
