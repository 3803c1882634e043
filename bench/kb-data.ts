/**
 * A generated knowledge base of varied English questions and answers (products × question forms),
 * and customer messages that ask them in other words, so matching does real work.
 */
const PRODUCTS = [
  'the Aurora desk lamp', 'the Nimbus rain jacket', 'the Trailblazer hiking boots', 'the Cascade water filter',
  'the Orbit wireless earbuds', 'the Summit backpack', 'the Harbor coffee grinder', 'the Pioneer camping stove',
  'the Meadow linen sheets', 'the Vertex standing desk', 'the Ember cast-iron skillet', 'the Drift kayak paddle',
  'the Lumen reading glasses', 'the Tundra sleeping bag', 'the Breeze ceiling fan', 'the Atlas world map poster',
  'the Quartz wall clock', 'the Willow garden hose', 'the Falcon drone', 'the Sierra yoga mat',
  'the Echo smart speaker', 'the Pebble phone case', 'the Canyon road bike', 'the Glacier ice maker',
  'the Maple cutting board', 'the Comet electric scooter', 'the Harvest lunch box', 'the Beacon bike light',
  'the Solstice sunscreen', 'the Voyager suitcase', 'the Prism gaming monitor', 'the Cedar bookshelf',
  'the Ripple bath towels', 'the Horizon binoculars',
];
const FORMS: Array<[question: string, answer: string]> = [
  ['How long does shipping take for {p}?', '{P} ships within 2 business days; standard delivery takes 3 to 5 days.'],
  ['Can I return {p} if it does not fit my needs?', 'Yes, {p} can be returned within 30 days in its original packaging for a full refund.'],
  ['Is {p} covered by a warranty?', '{P} comes with a two-year limited warranty against manufacturing defects.'],
  ['What colours does {p} come in?', '{P} is available in charcoal, sand, forest green and navy.'],
  ['Do you ship {p} internationally?', 'We ship {p} to over 40 countries; duties are shown at checkout.'],
  ['How do I clean {p}?', 'Wipe {p} with a damp cloth and mild soap; avoid bleach and abrasive pads.'],
  ['Is {p} in stock right now?', '{P} is in stock at our main warehouse; the product page shows live availability.'],
  ['Can I get a discount on {p} if I buy two?', 'Buying two of {p} gives you 10% off the second one automatically at checkout.'],
  ['What are the dimensions of {p}?', 'The full dimensions of {p} are listed under Specifications on its product page.'],
  ['My {p} arrived damaged, what should I do?', 'Sorry about that! Send us a photo of the damaged {p} and we will ship a replacement right away.'],
  ['Does {p} need batteries or charging?', 'Check the box contents of {p}: any batteries it needs are included and replaceable.'],
  ['Can I change the delivery address for my {p} order?', 'You can change the address for your {p} order until it ships, from the Orders page.'],
  ['How do I track my order of {p}?', 'Your {p} order has a tracking link in the shipping confirmation email.'],
  ['Is {p} suitable as a gift, and can you wrap it?', 'Yes, {p} can be gift wrapped for a small fee, with a handwritten note.'],
  ['What materials is {p} made from?', '{P} is made from responsibly sourced materials listed on its product page.'],
  ['Can I cancel my order for {p}?', 'Orders for {p} can be cancelled free of charge until they leave the warehouse.'],
  ['Where is {p} manufactured?', '{P} is designed in-house and assembled by certified partners in Portugal and Vietnam.'],
  ['Do you offer assembly instructions for {p}?', 'Assembly instructions for {p} are in the box and as a PDF on the product page.'],
  ['Is there a newer model of {p} coming soon?', 'We do not announce new versions of {p} in advance; subscribe to our newsletter for news.'],
  ['Can I pay for {p} in instalments?', 'Yes, {p} can be paid in three interest-free instalments at checkout.'],
  ['What is your price match policy for {p}?', 'We match any authorised retailer’s lower price for {p} within 14 days of purchase.'],
  ['How heavy is {p}?', 'The weight of {p} is listed under Specifications; it ships in recyclable packaging.'],
  ['Is {p} safe for children to use?', '{P} meets EU and US safety standards; adult supervision is advised for young children.'],
  ['Do you have spare parts for {p}?', 'Spare parts for {p} can be ordered from our support page using the serial number.'],
  ['Can I pick up {p} from a store instead of delivery?', 'Click and collect is available for {p} at all our stores, usually ready within a day.'],
  ['What does the box of {p} include?', 'The box of {p} includes the product, a quick start guide and the warranty card.'],
  ['How do I register {p} for the warranty?', 'Register {p} on our website with the serial number on the box within 60 days.'],
  ['Why was my payment for {p} declined?', 'A declined payment for {p} is usually a bank check; try again or use another card.'],
  ['Is {p} waterproof?', '{P} resists splashes; it is not designed to be submerged.'],
  ['Are there reviews of {p} from other customers?', 'Customer reviews of {p} are at the bottom of its product page.'],
];
const REPHRASE: Array<(q: string) => string> = [
  (q) => q,
  (q) => `Hi there! ${q}`,
  (q) => `${q} Thanks in advance.`,
  (q) => `Quick question: ${q.charAt(0).toLowerCase()}${q.slice(1)}`,
  (q) => `Hello, I ordered last week. ${q}`,
  (q) => `${q.replace(/\?$/, '')}, please?`,
];
const SMALL_TALK = ['Hello?', 'Thanks, that helps a lot!', 'Can I talk to a human please?', 'ok', 'Are you still there?', 'Great, have a nice day.'];

const fill = (s: string, p: string): string => s.replaceAll('{p}', p).replaceAll('{P}', p.charAt(0).toUpperCase() + p.slice(1));

export function knowledgeBase(count: number): Array<{ question: string; answer: string }> {
  const out: Array<{ question: string; answer: string }> = [];
  for (let i = 0; out.length < count; i++) {
    const p = PRODUCTS[i % PRODUCTS.length]!;
    const [q, a] = FORMS[Math.floor(i / PRODUCTS.length) % FORMS.length]!;
    const round = Math.floor(i / (PRODUCTS.length * FORMS.length));
    out.push({ question: fill(q, p) + (round ? ` (${round + 1})` : ''), answer: fill(a, p) });
  }
  return out;
}

/**
 * The n-th customer message: mostly a knowledge-base question in other words, sometimes small talk
 * (one in ten, much of it handed off to a human). bench/scale's history uses it.
 */
export function customerMessage(kb: Array<{ question: string }>, n: number): string {
  if (n % 10 === 7) return SMALL_TALK[n % SMALL_TALK.length]!;
  const q = kb[(n * 7919) % kb.length]!.question;
  return REPHRASE[n % REPHRASE.length]!(q);
}

/**
 * The n-th customer message as an integrator's real auto_dialog traffic asks it: always a
 * knowledge-base question in other words (one of six rephrasings), never small talk, so every
 * auto_dialog message is answered from the knowledge base. bench/ingest sends these.
 */
export function kbQuestion(kb: Array<{ question: string }>, n: number): string {
  const q = kb[(n * 7919) % kb.length]!.question;
  return REPHRASE[n % REPHRASE.length]!(q);
}
