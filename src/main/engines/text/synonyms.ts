/**
 * Words customers use for the same thing in a support chat, English and Chinese in one group so
 * a question in one language can find an entry written in the other. Each group becomes one
 * matching unit (its first word). The vocabulary of online shops and software accounts, the two
 * kinds of knowledge base Switchboard ships examples for; a knowledge base with its own words
 * gives them as "also asked as" phrasings. Phrases (several words) are matched before words.
 * Kept narrow on purpose: a synonym that is only sometimes one ("get" for "receive") makes
 * unrelated questions look alike, which costs more than it finds.
 */
export const SYNONYM_GROUPS: ReadonlyArray<readonly string[]> = [
  ['password', 'passwd', 'pw', 'pwd', 'passcode', 'passphrase', 'credentials', '密码', '口令'],
  ['forgot', 'forget', 'forgotten', "don't remember", 'do not remember', "can't remember", 'cannot remember', 'not remember', '忘记', '忘了', '想不起来', '记不得', '记不住', '记不清', '不记得'],
  ['reset', 'recover', 'recovery', 'restore', 'new password', '重置', '找回', '重设', '恢复'],
  ['login', 'log in', 'log-in', 'logon', 'sign in', 'sign-in', 'signin', 'locked out', 'get in', '登录', '登陆', '登入', '登不上'],
  ['change', 'update', 'modify', 'edit', 'switch', 'replace', '修改', '更改', '更换', '变更', '改', '换'],
  ['email', 'e-mail', 'mail address', 'email address', 'mailbox', 'inbox', '邮箱', '电子邮件', '电子邮箱', '邮件地址', '邮箱地址'],
  ['account', 'profile', '账户', '账号', '帐户', '帐号', '个人资料'],
  ['order', 'orders', 'purchase', 'purchases', 'bought', '订单', '下单', '买的'],
  ['parcel', 'package', 'shipment', 'consignment', '包裹', '快递'],
  ['track', 'tracking', 'trace', 'status', '物流', '跟踪', '追踪', '查件'],
  ['ship', 'shipping', 'shipped', 'dispatch', 'dispatched', 'send out', 'sent out', 'post', 'posted', '发货', '寄出', '发出', '出库'],
  ['deliver', 'delivery', 'arrive', 'arrival', 'arrives', 'transit', '送达', '配送', '到货', '送货', '到达', '运送'],
  ['when', 'how long', 'how many days', 'how soon', 'what time', 'duration', 'until', 'till', '多久', '多长时间', '几天', '多少天', '要多久', '什么时候', '何时', '啥时候', '几时', '几点'],
  ['international', 'internationally', 'abroad', 'overseas', 'worldwide', 'other countries', 'another country', 'foreign', '国际', '国外', '海外', '境外', '出国'],
  ['return', 'send back', 'send it back', 'give back', 'take back', '退货', '退回', '寄回', '退掉', '退', '退换'],
  ['refund', 'refunds', 'refunded', 'money back', 'reimburse', 'reimbursement', 'repay', '退款', '退钱', '返款'],
  ['pay', 'payment', 'paying', 'checkout', '付款', '支付', '付钱', '结账'],
  ['card', 'credit card', 'debit card', 'visa', 'mastercard', 'amex', 'paypal', 'bank transfer', '信用卡', '银行卡', '转账'],
  ['cancel', 'cancellation', 'unsubscribe', 'terminate', 'stop paying', '取消', '退订', '停止订阅'],
  ['subscription', 'membership', 'subscribed', '订阅', '会员'],
  ['upgrade', 'go pro', 'switch to pro', '升级'],
  ['plan', 'tier', 'package plan', '套餐', '方案', '版本'],
  ['cost', 'price', 'pricing', 'how much', 'fee', 'fees', 'charge', 'expensive', 'cheap', '价格', '多少钱', '费用', '收费', '价钱', '贵'],
  ['human', 'agent', 'person', 'real person', 'representative', 'operator', 'somebody', 'someone', 'live chat', '人工', '真人', '转人工', '工作人员'],
  ['contact', 'talk', 'speak', 'reach', 'call', 'chat with', '联系', '联络', '沟通'],
  ['hours', 'opening hours', 'opening', 'business hours', 'working hours', 'available', 'availability', 'close', 'closing', '营业时间', '工作时间', '上班', '下班', '营业'],
  ['item', 'product', 'goods', 'article', 'merchandise', '商品', '东西', '产品', '货'],
  ['where', 'whereabouts', 'which place', '在哪', '哪里', '哪儿', '在哪里', '到哪'],
  // A named country stands for "a country": "do you ship to Canada" asks what "do you ship to my country" asks.
  ['country', 'countries', '国家', 'canada', 'mexico', 'brazil', 'argentina', 'uk', 'britain', 'england', 'ireland', 'france', 'germany', 'spain', 'portugal', 'italy', 'netherlands', 'belgium', 'switzerland', 'austria', 'sweden', 'norway', 'denmark', 'finland', 'poland', 'greece', 'turkey', 'russia', 'ukraine', 'china', 'japan', 'korea', 'india', 'singapore', 'malaysia', 'thailand', 'vietnam', 'indonesia', 'philippines', 'australia', 'zealand', 'egypt', 'nigeria', 'kenya', 'israel', 'emirates', 'dubai', 'usa', 'america', '加拿大', '墨西哥', '巴西', '英国', '爱尔兰', '法国', '德国', '西班牙', '葡萄牙', '意大利', '荷兰', '比利时', '瑞士', '奥地利', '瑞典', '挪威', '丹麦', '芬兰', '波兰', '希腊', '土耳其', '俄罗斯', '中国', '日本', '韩国', '印度', '新加坡', '马来西亚', '泰国', '越南', '印尼', '菲律宾', '澳大利亚', '澳洲', '新西兰', '美国', '香港', '台湾', '澳门'],
];
