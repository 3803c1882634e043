/** Protocol v1.2 section 2: the display names are strings of at most 200 characters. */
export const NAME_MAX = 200;
export const DEFAULT_WAIT_SECONDS = 10;

export const SEND_USAGE = `usage: npm run cli -- send --client ID (--secret S | --secret-env NAME | --secret-stdin) --event EVENT_TYPE
         [--endpoint URL] [--from USER] [--from-type 1..4] [--to USER] [--group ID] [--at USER,...]
         [--nickname NAME] [--to-nickname NAME] [--group-name NAME]
         [--content TEXT] [--msg-id ID] [--send-url URL] [--file MESSAGE_INFO.json] [--timestamp SECONDS] [--dry-run] [--wait SECONDS]
  Signs one message (docs/protocol.md section 3), POSTs it and prints the response: status, headers, body.
  --event        auto_dialog | assist_dialog | website_dialog | cmd_dialog
  --endpoint     default: the address in <data-dir>/config.json, else http://127.0.0.1:8787/custom-im/chat-messages
  --nickname     the sender's display name (from_user_nickname), up to ${NAME_MAX} characters
  --to-nickname  the receiver's display name (to_user_nickname), up to ${NAME_MAX} characters
  --group-name   the group conversation's title (group_name), up to ${NAME_MAX} characters
  --file         a message_info JSON object (or a whole request body), sent as it is; flags override its fields
  --msg-id       default: a fresh id (cli_...); with --file, only what the file has (nothing is added)
  --from-type    default 2 (customer) for auto_dialog; with --file, only what the file has (nothing is added)
  --timestamp    default: now; set it to reproduce a signature
  --dry-run      prints the canonical message_info, the signing string and the signature; sends nothing
  --wait         while nothing listens at the endpoint yet (serve still starting), keep trying this long;
                 default ${DEFAULT_WAIT_SECONDS}, 0 tries once
  Exit status: 0 on a 2xx answer, 1 on any other answer, 2 on a bad flag, 3 when the endpoint gives no answer.`;
