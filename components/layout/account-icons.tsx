// The account menu's icons: the menu (./user-menu-panel.tsx) loads when first opened, and these with it.
import { Icon, type IconProps } from "../ui/icon";

export function SignOutIcon(props: IconProps) {
  return (
    <Icon {...props}>
      <path d="M9 21H5a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2h4M16 17l5-5-5-5M21 12H9" />
    </Icon>
  );
}

export function DevicesIcon(props: IconProps) {
  return (
    <Icon {...props}>
      <rect x="2" y="4" width="14" height="10" rx="1.5" />
      <path d="M5 18h8" />
      <rect x="17" y="8" width="5" height="12" rx="1" />
    </Icon>
  );
}
